{% set state = 'uuid' %}
{% include "php/installed.jinja" %}
