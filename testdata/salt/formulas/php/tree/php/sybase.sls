{% set state = 'sybase' %}
{% include "php/installed.jinja" %}
