{% set state = 'igbinary' %}
{% include "php/installed.jinja" %}
