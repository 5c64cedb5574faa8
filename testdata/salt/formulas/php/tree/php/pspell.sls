{% set state = 'pspell' %}
{% include "php/installed.jinja" %}
