{% set state = 'apc' %}
{% include "php/installed.jinja" %}
