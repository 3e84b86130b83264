// An app's module, whose agent tests break and keep the rules.
module example.com/bot

go 1.26.0
