{% set state = 'xml' %}
{% include "php/installed.jinja" %}
