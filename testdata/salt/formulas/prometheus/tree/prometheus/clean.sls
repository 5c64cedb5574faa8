#.-*- coding: utf-8 -*-
# vim: ft=sls

include:
  - .service.clean
  - .config.clean
  - .exporters.clean
  - .clientlibs.clean
  - .archive.clean
  - .package.clean
