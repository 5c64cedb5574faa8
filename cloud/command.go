package cloud

import "context"

// Command is what one salt-cloud command line asks for: the VMs Names
// of a profile (Profile), those of a map file (MapFile; Hard: also
// destroying the VMs of the map's providers it does not list), or VMs to
// destroy (Destroy: Names, or with MapFile the map's). Parallel is how
// many VMs are worked on at once.
type Command struct {
	Profile  string
	MapFile  string
	Hard     bool
	Destroy  bool
	Names    []string
	Parallel int
}

// PlanCommand is what r will create and destroy.
func (c *Cloud) PlanCommand(ctx context.Context, r Command) (*Plan, error) {
	switch {
	case r.Profile != "":
		return c.PlanProfile(ctx, r.Profile, r.Names)
	case r.MapFile != "":
		m, err := LoadMap(r.MapFile)
		if err != nil {
			return nil, err
		}
		if r.Destroy {
			return c.PlanMapDestroy(ctx, m)
		}
		return c.PlanMap(ctx, m, r.Hard)
	}
	return c.PlanDestroy(ctx, r.Names)
}

// Job names r as the job it is, with salt-cloud's function names
// (cloud.profile, cloud.map_run, cloud.map_destroy, cloud.destroy) and
// arguments, for the job store and the salt/job events.
func (r Command) Job() (fun string, kwargs map[string]any) {
	kw := map[string]any{"parallel": r.Parallel}
	switch {
	case r.Profile != "":
		kw["prof"], kw["instances"] = r.Profile, r.Names
		return "cloud.profile", kw
	case r.MapFile != "":
		kw["path"] = r.MapFile
		if r.Hard {
			kw["hard"] = true
		}
		if r.Destroy {
			return "cloud.map_destroy", kw
		}
		return "cloud.map_run", kw
	}
	kw["names"] = r.Names
	return "cloud.destroy", kw
}
