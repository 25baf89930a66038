"""Validate tool arguments before a handler runs; failures name the bad field."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from noema_graph.tools.results import ToolFailure
from noema_graph.tools.spec import ToolSpec

if TYPE_CHECKING:  # jsonschema costs ~70 ms of imports: loaded by the first JSON-schema tool
    import jsonschema


def validate_arguments(spec: ToolSpec, arguments: object) -> dict[str, object]:
    """Return the validated keyword arguments for ``spec.handler``.

    Raises:
        ToolFailure: ``invalid_input`` naming each bad field, so the model can fix its call.
    """
    if not isinstance(arguments, dict):
        raise ToolFailure(
            f"invalid input for {spec.name}: arguments must be a JSON object, "
            f"got {type(arguments).__name__}",
            type_="invalid_input",
        )
    args: dict[str, object] = {str(key): value for key, value in arguments.items()}
    if isinstance(spec.input_schema, dict):
        return _validate_json_schema(spec, spec.input_schema, args)
    return _validate_model(spec, spec.input_schema, args)


def _validate_model(
    spec: ToolSpec, model: type[BaseModel], args: dict[str, object]
) -> dict[str, object]:
    try:
        parsed = model.model_validate(args)
    except ValidationError as exc:
        problems = [
            {
                "field": ".".join(str(part) for part in error["loc"]) or "<root>",
                "message": error["msg"],
            }
            for error in exc.errors()
        ]
        raise _invalid(spec, problems) from None
    return {name: getattr(parsed, name) for name in type(parsed).model_fields}


def _validate_json_schema(
    spec: ToolSpec, schema: dict[str, object], args: dict[str, Any]
) -> dict[str, object]:
    import jsonschema.validators

    validator_class = jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft202012Validator
    )
    validator = validator_class(schema)
    problems = [
        {
            "field": ".".join(str(part) for part in error.absolute_path) or _missing_field(error),
            "message": error.message,
        }
        for error in sorted(validator.iter_errors(args), key=_error_position)
    ]
    if problems:
        raise _invalid(spec, problems)
    return args


def _error_position(error: jsonschema.ValidationError) -> str:
    return ".".join(str(part) for part in error.absolute_path)


def _missing_field(error: jsonschema.ValidationError) -> str:
    # "required" errors sit at the root; the message is "'path' is a required property".
    if error.validator == "required":
        return error.message.split("'")[1] if "'" in error.message else "<root>"
    return "<root>"


def _invalid(spec: ToolSpec, problems: list[dict[str, str]]) -> ToolFailure:
    summary = "; ".join(f"field {p['field']!r}: {p['message']}" for p in problems)
    return ToolFailure(
        f"invalid input for {spec.name}: {summary}",
        type_="invalid_input",
        details={"errors": problems},
    )
