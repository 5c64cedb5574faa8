# -*- coding: utf-8 -*-
# vim: ft=sls

{#- Get the `tplroot` from `tpldir` #}
{%- set tplroot = tpldir.split('/')[0] %}
{%- from tplroot ~ "/map.jinja" import golang with context %}

include:
  - {{ '.archive' if golang.pkg.use_upstream_archive else '.package' }}
  - .config
  - .cmd
