{% set state = 'mysql' %}
{% include "php/installed.jinja" %}
