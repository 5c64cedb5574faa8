# -*- coding: utf-8 -*-
# vim: ft=sls

include:
  - .pkgs
  - .remote_pkgs
  - .pips
  - .gems
  - .npms
  - .archives
  - .snaps
  - .golang
  - .chocolatey
