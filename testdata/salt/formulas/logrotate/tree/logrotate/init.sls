# -*- coding: utf-8 -*-
# vim: ft=sls

include:
  - logrotate.install
  - logrotate.config
  - logrotate.service
  - logrotate.jobs
