{% set state = 'dev' %}
{% include "php/installed.jinja" %}
