{% set state = 'fpm' %}
{% include "php/installed.jinja" %}
