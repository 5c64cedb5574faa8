# -*- coding: utf-8 -*-
# vim: ft=sls

include:
  - .containers.clean
  - .compose.clean
  - .software.clean
