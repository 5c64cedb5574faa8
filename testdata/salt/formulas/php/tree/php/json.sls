{% set state = 'json' %}
{% include "php/installed.jinja" %}
