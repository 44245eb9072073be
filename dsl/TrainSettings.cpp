//===- TrainSettings.cpp - A `train { }` section into TrainSettings -------===//
//
// The keys, their types, ranges and choices are the table in
// runtime/base/TrainSettings.cpp; here each entry's expression (or `--set` text)
// is read into the Elaborator's einrt::TrainSettings, with a source
// diagnostic on a bad one, and the result is written into the module's
// `ein.train` dictionary (the IR's record of the settings: nothing reads it
// back; consumers get the struct).
//
//===----------------------------------------------------------------------===//
#include "dsl/ElaboratorImpl.h"

using namespace mlir;

namespace ein::dsl {

bool isTrainKey(llvm::StringRef key) { return einrt::findTrainSetting(key.str()) != nullptr; }

bool trainSetting(Elaborator &E, llvm::StringRef key, SourceLoc loc, const Expr *value,
                  llvm::StringRef overrideText, einrt::TrainSettings &settings) {
  const einrt::SettingInfo *info = einrt::findTrainSetting(key.str());
  if (!info) {
    E.diags.error(loc, "unknown train setting '" + key +
                           "'; known settings: " + einrt::trainSettingKeys());
    return false;
  }
  std::string problem;
  if (!value) {
    problem = einrt::setTrainText(settings, key.str(), overrideText.str());
    if (!problem.empty())
      E.diags.error(loc, "--set " + key + "=" + overrideText + ": " + problem);
    return problem.empty();
  }
  if (info->isWord()) {
    if (value->kind != ExprKind::Name && value->kind != ExprKind::String)
      problem = "'" + key.str() + "' takes one of: " + info->choices;
    else
      problem = einrt::setTrainWord(settings, *info, value->text);
  } else {
    auto v = E.constantNumber(*value);
    if (!v)
      return false;
    problem = einrt::setTrainNumber(settings, *info, *v);
  }
  if (!problem.empty())
    E.diags.error(value->loc, problem);
  return problem.empty();
}

DictionaryAttr trainAttribute(const einrt::TrainSettings &settings, Builder &b) {
  llvm::SmallVector<NamedAttribute> entries;
  for (const std::string &key : settings.given) {
    const einrt::SettingInfo &info = *einrt::findTrainSetting(key);
    std::string text = einrt::trainSettingValue(settings, info);
    Attribute a;
    if (info.isWord())
      a = b.getStringAttr(text);
    else if (info.isCount())
      a = b.getI64IntegerAttr(std::stoll(text));
    else
      a = b.getF64FloatAttr(std::stod(text));
    entries.push_back(b.getNamedAttr(key, a));
  }
  return b.getDictionaryAttr(entries);
}

} // namespace ein::dsl
