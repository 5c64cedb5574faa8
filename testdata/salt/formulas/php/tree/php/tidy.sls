{% set state = 'tidy' %}
{% include "php/installed.jinja" %}
