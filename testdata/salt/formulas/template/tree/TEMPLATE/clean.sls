# -*- coding: utf-8 -*-
# vim: ft=sls

include:
  - .subcomponent.clean
  - .service.clean
  - .config.clean
  - .package.clean
