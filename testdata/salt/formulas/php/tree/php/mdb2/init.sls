{% set state = 'mdb2' %}
{% include "php/installed.jinja" %}
