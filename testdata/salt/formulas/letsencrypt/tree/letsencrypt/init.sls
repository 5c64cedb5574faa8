# -*- coding: utf-8 -*-
# vim: ft=sls

include:
  - letsencrypt.install
  - letsencrypt.config
  - letsencrypt.service
  - letsencrypt.domains
