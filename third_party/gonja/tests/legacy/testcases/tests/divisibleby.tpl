{{ 21 is divisibleby(3) }}
{{ 21 is divisibleby 3 }}
{{ 21 is divisibleby("3") }}
{{ 21|float is divisibleby("3") }}
{{ 22 is divisibleby("3") }}
{{ 85 is divisibleby(simple.number) }}
{{ 84 is divisibleby(simple.number) }}
