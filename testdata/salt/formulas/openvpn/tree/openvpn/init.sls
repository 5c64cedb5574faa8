# This is the main state file for configuring openvpn.

include:
  - openvpn.repo
  - openvpn.install
  - openvpn.adapters
  - openvpn.dhparams
  - openvpn.service
