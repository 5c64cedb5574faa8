// Package curve is ZeroMQ's CURVE security mechanism (ZMTP-CURVE, RFC 25,
// running the CurveZMQ protocol, RFC 26) for zmq4 connections, compatible
// with libzmq. zmq4 has no CURVE of its own; here a Mechanism is the
// zmq4.Security that zmq4.Open runs after the greeting, and a Session seals
// and opens the connection's frames afterwards.
//
// # Protocol
//
// The server has a long-term key pair S/s, each client one of its own, C/c.
// A client must know S before it connects; the server learns C during the
// handshake. For each connection both sides also make a transient pair,
// C'/c' and S'/s', which all later traffic is encrypted with (forward
// secrecy: a stolen long-term key does not open recorded connections).
// Box[X](A→B) is a NaCl box (Curve25519, XSalsa20, Poly1305) sealed with A's
// secret key for B's public key; short nonces are 8-byte counters and long
// nonces 16 random bytes, each completed by a fixed 8- or 16-byte prefix.
//
//	C→S HELLO     version 1.0, 72 zero bytes (anti-amplification padding),
//	              C', short nonce 1, Box[64 zero bytes](C'→S)
//	              nonce prefix "CurveZMQHELLO---"
//	S→C WELCOME   long nonce, Box[S' + cookie](S→C'), prefix "WELCOME-";
//	              cookie = long nonce + SecretBox[C' + s'](cookie key),
//	              prefix "COOKIE--"
//	C→S INITIATE  cookie, short nonce 2, Box[C + vouch + metadata](C'→S'),
//	              prefix "CurveZMQINITIATE"; vouch = long nonce +
//	              Box[C' + S](C→S'), prefix "VOUCH---"
//	S→C READY     short nonce 1, Box[metadata](S'→C'), prefix "CurveZMQREADY---"
//	 ↔  MESSAGE   short nonce, Box[flags + payload](C'→S' or S'→C'),
//	              prefix "CurveZMQMESSAGEC" from the client,
//	              "CurveZMQMESSAGES" from the server
//	S→C ERROR     a reason (a length byte and up to 255 characters), in place
//	              of WELCOME or READY
//
// The server keeps its per-connection state (it does not need the cookie to
// be stateless) but still sends the cookie and checks that INITIATE returns
// it, as libzmq does.
//
// # Who authenticates what
//
// Only the holder of s can open HELLO and seal WELCOME, so a client whose
// handshake succeeds talks to the holder of the server key it was
// configured with. When that fails the client's error matches ErrServerKey
// ("server key mismatch"): a libzmq server closes the connection without a
// word when HELLO does not open with its key, and this package's server
// answers ERROR "wrong server key".
//
// Only the holder of c can seal the vouch, which binds C to this
// connection's C' and to S, so the server knows the client holds the secret
// key of the C it presents. Whether that C may connect is the Authorizer's
// decision (NewServer); a refusal is sent as ERROR with the Authorizer's
// error text, which the client reports as ErrRefused. libzmq servers refuse
// through ZAP with ERROR "400".
//
// Metadata (Socket-Type, Identity) travels encrypted both ways and lands in
// zmq4.Conn.Peer.Meta, where zmq4 checks the socket types. Every frame after
// the handshake is encrypted and authenticated, and its nonce must be the
// one after the previous frame's in that direction, so a frame cannot be
// replayed, reordered or dropped unnoticed. Not protected: the greeting,
// frame sizes and ERROR (sent before anything is authenticated: anyone on
// the path can forge one, or just cut the connection).
//
// # Message frames on the wire
//
// A MESSAGE travels as a ZMTP frame whose body is the whole command:
// "\x07MESSAGE", the 8-byte big-endian short nonce, and the box of one flags
// byte (bit 0 MORE, bit 1 COMMAND: libzmq's message flags) followed by the
// payload. libzmq 4.3 (curve_encoding_t::encode) seals a message part's MORE
// and COMMAND flags in the box and sends the MESSAGE in a frame whose header
// has neither flag: only LONG, when the body is over 255 bytes. It does so
// whatever the peer's ZMTP version: 3.0 and 3.1 differ only in how
// subscriptions are encoded (3.1: SUBSCRIBE/CANCEL commands), and that
// happens inside the box. zmq4 announces ZMTP 3.0 in its greeting, so libzmq
// speaks 3.0 to it (subscriptions as data frames starting with 1 or 0, sealed
// like any other frame). On receipt libzmq ORs the header's MORE and COMMAND
// flags into the sealed ones; the header is not authenticated, so OpenFrame
// trusts the sealed flags and refuses a header flag they do not confirm.
// AppendFrame sends exactly what libzmq sends. Both are tested against
// Debian's libzmq 4.3.4 through python3-zmq.
//
// # Use in the gateway
//
// Each connection gets its own Mechanism: NewServer(masterKeys, authorize)
// for an accepted connection, NewClient(agentKeys, masterPublic) for a dialed
// one. zmq4.Open(conn, mech, typ, id, server, nil) runs the greeting and the
// handshake; only when it returns no error (it also checks socket types after
// a successful CURVE handshake) is mech.Session() the connection's Session.
//
// Reading: parse each frame header as today (a flags byte, then a 1-byte
// size, or an 8-byte big-endian size when LONG is set), bound the size
// (a frame's body is its payload plus Overhead, 33 bytes), read the body and
// call OpenFrame(flags, body). Use the flags it returns, not the header's,
// for MORE and COMMAND: a frame with FlagCommand is a ZMTP command from the
// peer (libzmq's heartbeat PING when the peer enables heartbeats), to skip as
// commands are skipped today. Every frame read must go through OpenFrame, in
// order; after an error the Session refuses everything, and the connection
// must be dropped.
//
// Writing: AppendFrame(dst, more, payload) appends each frame, header
// included, ready to write. Nonces are assigned when a frame is sealed and the
// peer accepts only the next one, so seal in the goroutine that writes, in
// the order written (the gateway's per-peer writer), not where messages are
// produced; a message can no longer be encoded once for every watcher. One
// goroutine may seal while another opens.
//
// zmq4's own sockets cannot carry CURVE traffic (zmq4 writes a frame's size
// before handing its payload to Security.Encrypt): Encrypt and Decrypt pass
// the handshake's commands through and otherwise fail with ErrNoMessages.
//
// # Keys
//
// A Key is 32 bytes; its text form is 40 characters of Z85 (RFC 32), as in
// libzmq's curve_publickey/curve_secretkey/curve_serverkey options.
// GenerateKeyPair makes a random pair, Derive a deterministic one from a
// shared secret and a label, Fingerprint the SHA-256 form operators compare
// (like Salt's master_finger). SaveKeyPair writes <name>.key (the secret key,
// mode 0600, written aside and linked into place, never replaced) and
// <name>.pub, each Z85 and a newline; LoadKeyPair refuses, like ssh, a
// secret key file that group or others may access; LoadOrCreateKeyPair
// creates the pair on first use.
package curve
