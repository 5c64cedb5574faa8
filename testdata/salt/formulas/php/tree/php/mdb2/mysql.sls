{% set state = 'mdb2-driver-mysql' %}
{% include "php/installed.jinja" %}
{% include "php/mdb2/init.sls" %}
