{% set state = 'auth-sasl' %}
{% include "php/installed.jinja" %}
