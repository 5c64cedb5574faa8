{% set state = 'redis' %}
{% include "php/installed.jinja" %}
