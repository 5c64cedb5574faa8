// Package saltapi serves salt-api's REST interface (rest_cherrypy) from
// the master, so that what Salt shops drive their masters with — SaltGUI,
// CI jobs posting lowstate, pepper — works against brine unchanged: Salt's
// external_auth logins and tokens, its ACLs on every client kind, and its
// request and reply shapes.
//
// It decides nothing about jobs itself: a lowstate chunk becomes a job
// through the master's Backend, the same publisher, runner functions and
// wheel functions the CLI and the reactor use.
package saltapi
