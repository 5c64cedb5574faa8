# -*- coding: utf-8 -*-
# vim: ft=sls

include:
  - node.config.file   # full path for legacy symlinks
  - node.config.environ
