{% set state = 'tokenizer' %}
{% include "php/installed.jinja" %}
