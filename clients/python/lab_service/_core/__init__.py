"""The hand-written runtime of the client: transport, retries, errors, pagination. The generated code in
lab_service/_generated builds on it; nothing here is generated."""
