# -*- coding: utf-8 -*-
# vim: ft=sls

include:
  - sysctl.package
  - sysctl.param
