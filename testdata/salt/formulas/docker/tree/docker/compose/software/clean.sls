# -*- coding: utf-8 -*-
# vim: ft=sls

include:
  - .package.clean
  - .binary.clean
  - .alternatives.clean
