{% set state = 'hhvm' %}
{% include "php/installed.jinja" %}
