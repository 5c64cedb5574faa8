{% set state = 'filter' %}
{% include "php/installed.jinja" %}
