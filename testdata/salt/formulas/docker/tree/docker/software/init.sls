# -*- coding: utf-8 -*-
# vim: ft=sls

include:
  - .package
  - .archive
  - .desktop
  - .config
  - .alternatives
  - .service
