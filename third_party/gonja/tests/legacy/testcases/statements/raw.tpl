.{{ simple.number }}{% raw %}
<style>@media{#foobar...
{{ test }}
{% test %}
{% endraw %}{{ simple.number }}.

.{{ simple.number }}{% raw %}{{ test }}{% endraw %}{{ simple.number }}.

{% raw -%}
{{ Fixing: https://github.com/noirbizarre/gonja/issues/9 }}
{%- endraw -%}
