{% set state = 'intl' %}
{% include "php/installed.jinja" %}
