{% set state = 'gearman' %}
{% include "php/installed.jinja" %}
