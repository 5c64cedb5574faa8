# -*- coding: utf-8 -*-
# vim: ft=sls

include:
  - .repo
  - .package
  - .config
  - .service
