# -*- coding: utf-8 -*-
# vim: ft=sls

include:
  - .config.modules        # enable
  # .config.modules.clean  # disable
