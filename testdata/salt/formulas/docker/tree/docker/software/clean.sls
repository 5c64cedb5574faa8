# -*- coding: utf-8 -*-
# vim: ft=sls

include:
  - .service.clean
  - .config.clean
  - .alternatives.clean
  - .package.clean
  - .archive.clean
  - .desktop.clean
