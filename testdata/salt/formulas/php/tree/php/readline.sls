{% set state = 'readline' %}
{% include "php/installed.jinja" %}
