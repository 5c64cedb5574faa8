# -*- coding: utf-8 -*-
# vim: ft=sls

include:
  - .file
  - .environ
  - .alternatives
