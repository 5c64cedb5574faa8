{% set state = 'zip' %}
{% include "php/installed.jinja" %}
