{% set state = 'mbstring' %}
{% include "php/installed.jinja" %}
