{% set state = 'mongo' %}
{% include "php/installed.jinja" %}
