{% set state = 'gmp' %}
{% include "php/installed.jinja" %}
