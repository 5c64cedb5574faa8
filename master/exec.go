package master

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/fileserver"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/master/rpc"
	"github.com/brinehq/brine/reactor"
	"github.com/brinehq/brine/wire"
)

// fileChunk is how much of a file one file_read answer carries (base64 in
// JSON: a third more on the wire).
const fileChunk = 256 << 10

// startPublisher reads the publisher's configuration and serves agents'
// job states, file requests and mine queries.
func (m *Master) startPublisher(ctx context.Context) error {
	if err := m.publisher.configure(m.cfg); err != nil {
		return err
	}
	m.grp.Go(func() error { m.publisher.serve(m.ctx); return nil })
	gw := m.gateway
	gw.HandleAgent(wire.MethodFileList, m.agents.bind(m.fileList))
	gw.HandleAgent(wire.MethodFileStat, m.agents.bind(m.fileStat))
	gw.HandleAgent(wire.MethodFileRead, m.agents.bind(m.fileRead))
	gw.HandleAgent(wire.MethodMineGet, m.agents.bind(m.agentMineGet))
	gw.HandleAgent(wire.MethodFileEnvs, m.agents.bind(m.fileEnvs))
	gw.HandleAgent(wire.MethodPillar, m.agents.bind(m.agentPillar))
	gw.HandleAgent(wire.MethodProgress, m.agents.bind(m.stateProgress))
	gw.HandleAgent(wire.MethodFilePush, m.agents.bind((&fileRecv{m: m}).push))
	return m.pillars.configure(m.cfg)
}

// execPublish answers `brine exec`: a target that selects nobody is an
// empty Minions list, which the CLI reports as Salt does.
func (m *Master) execPublish(ctx context.Context, body json.RawMessage) (any, error) {
	t, err := jobs.DecodeTargeted(body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rpc.ExecPublish, err)
	}
	pub, _, err := m.publisher.Publish(ctx, t, bus.Origin{Source: m.source + "/exec"}, false)
	if errors.Is(err, ErrNoMinions) {
		return pub, nil
	}
	return pub, err
}

func (m *Master) execFindJob(ctx context.Context, body json.RawMessage) (any, error) {
	var req rpc.FindJobRequest
	if err := decode(rpc.ExecFindJob, body, &req); err != nil {
		return nil, err
	}
	return m.publisher.FindJob(ctx, req.JID, req.Minions), nil
}

func (m *Master) execTargets(ctx context.Context, body json.RawMessage) (any, error) {
	raw, err := (&bus.Event{Data: body}).DataMap()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rpc.ExecTargets, err)
	}
	tt, _ := raw["tgt_type"].(string)
	minions, missing, err := m.publisher.Targets(ctx, raw["tgt"], tt)
	if err != nil {
		return nil, err
	}
	conn := m.connected(ctx)
	rep := rpc.TargetReply{Minions: minions, Missing: missing, Connected: []string{}}
	for _, id := range minions {
		if _, ok := slices.BinarySearch(conn, id); ok {
			rep.Connected = append(rep.Connected, id)
		}
	}
	return rep, nil
}

// roots are the file_roots agents are served from (the reactor's
// configuration reads them).
func (m *Master) roots() (fileserver.Roots, error) {
	cfg, err := reactor.LoadConfig(m.cfg)
	if err != nil {
		return nil, err
	}
	return fileserver.Roots(cfg.FileRoots), nil
}

// openServed opens the file an agent's request names, confined to
// file_roots; a refusal is logged with the agent's id.
func (m *Master) openServed(id string, body json.RawMessage) (*os.File, wire.FileRequest, error) {
	var req wire.FileRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, req, fmt.Errorf("%w: file request: %v", gateway.ErrInvalidRequest, err)
	}
	roots, err := m.roots()
	if err != nil {
		return nil, req, err
	}
	path, err := roots.Find(req.Saltenv, strings.TrimPrefix(req.Path, "salt://"))
	if err != nil {
		m.log.Warn("file request refused", "agent", id, "err", err)
		return nil, req, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, req, fmt.Errorf("salt://%s: %w", req.Path, err)
	}
	return f, req, nil
}

func (m *Master) fileStat(_ context.Context, id string, body json.RawMessage) (any, error) {
	f, req, err := m.openServed(id, body)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("salt://%s: is a directory", req.Path)
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return wire.FileStat{Size: st.Size(), Hash: hex.EncodeToString(h.Sum(nil)), Mode: uint32(st.Mode().Perm())}, nil
}

func (m *Master) fileRead(_ context.Context, id string, body json.RawMessage) (any, error) {
	f, req, err := m.openServed(id, body)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, fileChunk)
	n, err := f.ReadAt(buf, req.Offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("salt://%s: %w", req.Path, err)
	}
	return wire.FileChunk{Data: buf[:n], EOF: errors.Is(err, io.EOF) || n < fileChunk}, nil
}

// fileList lists the files of a saltenv, as cp.list_master: relative
// paths, the first root that has a path winning, nothing outside a root.
func (m *Master) fileList(_ context.Context, _ string, body json.RawMessage) (any, error) {
	var req wire.FileList
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("%w: file list: %v", gateway.ErrInvalidRequest, err)
	}
	roots, err := m.roots()
	if err != nil {
		return nil, err
	}
	return roots.List(req.Saltenv, req.Prefix), nil
}

// agentMineGet answers an agent's mine.get.
func (m *Master) agentMineGet(ctx context.Context, _ string, body json.RawMessage) (any, error) {
	var req wire.MineGet
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("%w: mine.get: %v", gateway.ErrInvalidRequest, err)
	}
	return m.mine.Query(ctx, req.Tgt, req.Fun, req.TgtType)
}

// minions runs local.* and caller.* reactions (reactor.Minions).
type minions struct{ m *Master }

func (x minions) RunJob(ctx context.Context, t jobs.Targeted, o bus.Origin, wait time.Duration) (jobs.Outcome, error) {
	out, err := x.m.publisher.Run(ctx, t, o, wait)
	return out, noMinion(t, err)
}

func (x minions) PublishJob(ctx context.Context, t jobs.Targeted, o bus.Origin) (jobs.Published, error) {
	pub, _, err := x.m.publisher.Publish(ctx, t, o, false)
	return pub, noMinion(t, err)
}

// noMinion words an empty target for a reaction's error event.
func noMinion(t jobs.Targeted, err error) error {
	if errors.Is(err, ErrNoMinions) {
		return fmt.Errorf("%w: tgt %s (tgt_type %s) selects no agent with an accepted key", reactor.ErrNoMinion,
			jobs.TargetText(t.Tgt), t.TgtType)
	}
	return err
}
