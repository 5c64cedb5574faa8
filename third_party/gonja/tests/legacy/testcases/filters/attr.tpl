{{ complex.user|attr('Name')|default('not found') }}
{{ complex.user|attr('missing')|default('not found') }}
