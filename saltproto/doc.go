// Package saltproto is Salt's own master–minion protocol, the part that
// is not networking: the payload codec (salt.payload), the session cipher
// (salt.crypt.Crypticle), the master's RSA keys in Salt's file formats and
// the RSA operations Salt performs with them (OAEP, PKCS#1 v1.5 SHA-1
// signatures, OpenSSL's X9.31 "private_encrypt"), the master's answer to a
// minion's _auth, the request and reply envelopes of the 4506 role and the
// publish payload and frames of the 4505 role.
//
// It exists so that brine's master can serve unmodified salt-minion 3006
// processes (issue 34): every byte here is what Salt 3006.6's
// salt/channel/server.py, salt/crypt.py and salt/payload.py produce or
// accept, and the differential tests run Salt's own Python against it. The
// ZeroMQ sockets, the key store and the master functions live elsewhere;
// this package takes decoded loads and key-store decisions and returns
// the exact values to send, so that it can be tested without a network.
//
// The minion's side (sign-in load, reply check, publish decoding) is here
// too: the tests and the protocol-level bench fleet play the minion with
// it, and it mirrors what salt.crypt.AsyncAuth checks, so a reply that
// passes it passes a real minion.
package saltproto
