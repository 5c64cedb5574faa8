{% set state = 'simplexml' %}
{% include "php/installed.jinja" %}
