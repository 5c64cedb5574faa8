{% set state = 'xmlwriter' %}
{% include "php/installed.jinja" %}
